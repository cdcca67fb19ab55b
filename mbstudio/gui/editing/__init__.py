"""Editing room: the document, its undoable commands, the model tree, the property editor and the sliders."""

"""The MB Studio window (Qt). Nothing outside this package imports Qt; nothing here computes analyses:
the window edits the document through undo commands and shows what mbstudio's APIs return."""

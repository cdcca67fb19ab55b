"""Jobs room: the jobs panel (progress, cancel) and the analysis option dialogs."""

"""Results room: tables, plots, the ridge and parameter-study panels, and their exports."""

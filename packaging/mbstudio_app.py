"""The bundled application's entry point: the `mbstudio` command (the window, or a sub-command)."""

import multiprocessing
import sys

from mbstudio.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # analyses run as jobs in processes started from this executable
    sys.exit(main())

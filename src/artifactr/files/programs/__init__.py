"""The programs: ``make demo`` and ``make serve``, each run with ``python -m``."""

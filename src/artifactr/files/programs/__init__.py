"""The programs: ``make demo`` and ``make serve``, each run with ``python -m``.

:mod:`~artifactr.files.programs.demo` tells the whole story on the embedded default;
:mod:`~artifactr.files.programs.serve` serves it to try by hand. Nothing imports them but each
other and the tests.
"""

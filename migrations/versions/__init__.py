"""The revisions of artifactr.files' chain, ``000N_what_it_does.py``, each revising the last."""

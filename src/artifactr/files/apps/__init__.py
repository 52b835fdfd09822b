"""The apps: adapters of the App port (:class:`~artifactr.files.core.app_port.App`).

``fake`` edits real .docx bytes in process, ``wordcraft`` runs WordCraft locally, ``worker`` sends
each call to the sandboxed worker, and ``libreoffice`` runs LibreOffice headless. Each imports
only the core.
"""

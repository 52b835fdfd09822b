"""The apps: adapters of the App port (:class:`~artifactr.files.core.app_port.App`).

``fake`` edits real .docx bytes in process (tests and the demo), ``wordcraft`` drives the pilot
app over MCP stdio or the worker's HTTP, ``libreoffice`` runs the office headless. Each imports
only the core; ``documents`` builds small real .docx files for any of them.
"""

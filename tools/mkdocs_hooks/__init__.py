"""MkDocs hooks, loaded by path from mkdocs.yml's ``hooks:``."""

"""MkDocs hook that renders the site's Graphviz pictures at build time (being written)."""

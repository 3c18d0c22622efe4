"""Tools that build and check the project's documentation; not part of the installed package."""

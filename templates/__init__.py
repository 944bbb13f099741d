"""Jinja2 templates of the emitters (shipped inside the package as quadsel.templates)."""

"""Renderers of the one Report: terminal, JSON, HTML, JUnit, Markdown."""

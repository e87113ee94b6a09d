"""Annotation sheets (export, import with validation) and agreement statistics."""

"""Audit: replay logs to findings and results, the fast two-pass path, stored findings and scoresheets."""

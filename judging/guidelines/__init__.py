"""Versioned guidelines: every change of what judges read is a numbered version.

A collection's *guidelines version* counts the changes of its guidelines and of any
query's description or narrative (one number for everything a judge reads, so one label
names exactly what its judge was shown). Each label records the version in force when it
was written; agreement can be split by version.
"""

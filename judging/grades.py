"""The grade scale every label uses: whole grades from 0 (not relevant) to 4 (perfect).

A module of its own so that models of every capability can read it without importing
``judging.models`` (which imports them).
"""

GRADE_MIN = 0
GRADE_MAX = 4

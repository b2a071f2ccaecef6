"""Calendar helpers written for GrooveSeek's tests (MIT, like the repository)."""

import functools

MAXYEAR = 9999
MINYEAR = 1


# A note about the module, separated by a blank line.

# The number of days in each month of a common year.
DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap(year: int) -> bool:
    """True for leap years of the proleptic Gregorian calendar."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


# Cached because the eval loop asks for the same months over and over.
@functools.cache
def days_in_month(year: int, month: int) -> int:
    """The number of days in ``month`` of ``year``."""
    if month == 2 and is_leap(year):
        return 29
    return DAYS_IN_MONTH[month - 1]


class Date:
    """A calendar date without a time zone."""

    def __init__(self, year: int, month: int, day: int) -> None:
        if not MINYEAR <= year <= MAXYEAR:
            raise ValueError(f"year {year} is out of range")
        self.year, self.month, self.day = year, month, day

    def ordinal(self) -> int:
        """Days since 0001-01-01, which is day 1."""
        before = sum(365 + is_leap(y) for y in range(1, self.year))
        return before + sum(days_in_month(self.year, m) for m in range(1, self.month)) + self.day

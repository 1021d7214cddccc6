"""Schedules: what a fill may do at the size it runs, and which way is fastest.

- :mod:`runtime.schedule.plan`: the regions, pattern, stages and reference of a
  recurrence at its own size (checked sweep or trace);
- :mod:`runtime.schedule.choose`: the backend ``auto`` stands for and the schedule a fill
  takes, each with the reason;
- :mod:`runtime.schedule.costmodel`: which one-launch GPU kernel fills a light pattern
  fastest, calibrated on the machine;
- :mod:`runtime.schedule.score_plan`: how a score-only fill walks the table.
"""

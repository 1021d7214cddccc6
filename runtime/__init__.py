"""The runtime: plan a fill (:mod:`runtime.schedule`), run it on a backend
(:mod:`runtime.backends`); :mod:`runtime.run` joins the two (``fill``), and
:mod:`runtime.score_only` for a score-only fill (``score``)."""

"""Views: what a person looks at.

- :mod:`depgraph.views.render`, :mod:`~depgraph.views.render_dag`,
  :mod:`~depgraph.views.render_plots`: the DAG, the stages, the regions and the pattern;
- :mod:`depgraph.views.report` and the modules it joins (``report_measure``, ``verdict``,
  ``report_plots``, ``report_markdown``, ``report_data``): what the graph costs against
  the fills;
- :mod:`depgraph.views.files`, :mod:`depgraph.views.progress`: files written whole or not
  at all, progress lines on a terminal.
"""

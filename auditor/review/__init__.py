"""`auditor review`: reviewers go through a findings store's exceptions in a browser, signed
in, and record what each one is (a disposition, store.dispositions), one finding or a
filtered selection at once.

- app: the application (FastAPI on Starlette, jinja2, htmx) and serving it (uvicorn)
- auth: the reviewers file (argon2 hashes), signing in and out, the signed session
- csrf: the form token every POST carries
- queries: what the pages read from the store (runs; a run's findings filtered and paged)
- rounds: a finding's round replayed from its run's output folder
- pages: the pages and what each POST does (the URL map is there)
- templates/, static/: the pages' templates (autoescaped), htmx, the style sheet and the
  keyboard shortcuts (review.js)
"""

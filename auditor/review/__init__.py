"""`auditor review`: reviewers go through a findings store's exceptions in a browser, signed
in, and record what each one is (a disposition, store.dispositions), one finding or a
filtered selection at once.

- app: the application (FastAPI on Starlette, jinja2, htmx) and serving it (uvicorn)
- auth: the reviewers file (argon2 hashes, roles, disabled; four_eyes), who a request is
  from
- sessions: sessions held in the store, ended by signing out, a changed password, a
  disabled reviewer or the idle timeout
- signin: the sign-in page, signing in and out; throttle: failed sign-ins held back
- hosts: the Host names served (any other: 400)
- trail: the review's events, append-only (review_events); events: the trail's page
- csrf: the form token every POST carries
- queries: what the pages read from the store (runs; a run's findings filtered and paged)
- rounds: a finding's round replayed from its run's output folder
- pages: the pages and what each POST does (the URL map is there)
- control: four eyes (proposals pending until a supervisor approves them), answers to
  proposals and sign-offs of runs, each with its trail; supervise: their routes, a
  supervisor's only
- templates/, static/: the pages' templates (autoescaped), htmx, the style sheet and the
  keyboard shortcuts (review.js)
"""

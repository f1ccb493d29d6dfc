"""Fixtures shared by the test modules."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def cluster():
    """A real Dask scheduler and two single-threaded worker processes on this machine
    (loopback), for a module's tests."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as local, \
            distributed.Client(local) as client:
        yield local, client

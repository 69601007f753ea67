"""The PostgreSQL key store: its tables are made on first use, by whichever process comes first."""

from __future__ import annotations

import threading
from pathlib import Path

from mindledger.adapters.postgres_keys import PostgresKeyStore
from mindledger.compose import persistence_env
from tests.integration.backends import backend_home, needs_postgres


@needs_postgres
def test_two_processes_first_using_a_key_store_at_once_both_get_its_tables(
    tmp_path: Path,
) -> None:
    with backend_home("postgres", tmp_path / "mind") as home:
        env = persistence_env(home)
        stores = [PostgresKeyStore(env), PostgresKeyStore(env)]
        ready = threading.Barrier(len(stores))
        failures: list[BaseException] = []

        def first_use(store: PostgresKeyStore) -> None:
            ready.wait()  # both create the tables together
            try:
                store.add({b"k" * 16: b"v" * 32})
                store.flush()
            except BaseException as e:
                failures.append(e)

        threads = [threading.Thread(target=first_use, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert failures == []
        assert [s.get([b"k" * 16]) for s in stores] == [{b"k" * 16: b"v" * 32}] * 2
        for store in stores:
            store.close()

"""The routing arithmetic behind the settings' copies (``store.solr.copies``).

SolrCloud's compositeId router puts ``prefix!rest`` on the shard whose hash range
holds the prefix's murmur3 hash (its top 16 bits); the copies are only on every
shard if this hash is Solr's. The end-to-end check is ``tests/e2e/test_solr_faults.py``
(a server opens from them with the records' shard killed).
"""

from __future__ import annotations

from rcpkit.engine.store.solr.copies import copy_ids, murmur3_32, shard_of, shard_prefixes

# The ranges SolrCloud gives a new collection of 2 and of 3 shards.
TWO = {"shard1": {"range": "80000000-ffffffff"}, "shard2": {"range": "0-7fffffff"}}
THREE = {
    "shard1": {"range": "80000000-d554ffff"},
    "shard2": {"range": "d5550000-2aa9ffff"},
    "shard3": {"range": "2aaa0000-7fffffff"},
}


def test_murmur3_is_the_reference_hash() -> None:
    # MurmurHash3_x86_32, seed 0: the reference implementation's published values.
    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 0x248BFA47
    assert murmur3_32(b"Hello, world!") == 0xC0363E43
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723


def test_each_shard_gets_a_prefix_of_its_own_and_the_records_stay_where_solr_put_them() -> None:
    for shards in (TWO, THREE):
        prefixes = shard_prefixes(shards)
        assert sorted(prefixes) == sorted(shards)
        ranges = {name: shard["range"] for name, shard in shards.items()}
        assert all(shard_of(prefix, ranges) == name for name, prefix in prefixes.items())
        assert len(set(copy_ids("embed.identity", prefixes).values())) == len(shards)
    # Seen on a 2-shard collection: Solr keeps `rcpkit!…` (the records) on shard1.
    assert shard_of("rcpkit", {name: shard["range"] for name, shard in TWO.items()}) == "shard1"
    # A shard range the hash's top 16 bits straddle (a split shard's): no shard.
    assert shard_of("rcpkit", {"a": "80000000-f80b0000", "b": "f80b0001-7fffffff"}) is None

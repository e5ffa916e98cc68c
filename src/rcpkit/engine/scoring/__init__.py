"""The scoring maths a retrieve stage and the rerank share: BM25, RM3, proximity, smoothing.

Pure functions over terms, counts and scores, with no engine state: the stages
that apply them are in ``rcpkit.engine.retrieve``, the rerank in
``rcpkit.engine.rerank``.
"""

"""Retrieval strategies: decorators around a retriever.

Tag-based retrieval, time weighting, deep research, adaptive retrieval and corrective RAG, each a
decorator around ``async retrieve(query, options, identity)``; :func:`compose.build_retriever`
stacks them in the seeds' order. Import the modules you need (this package imports nothing eagerly).
"""

"""Mnemograph's client side: the Python SDK (:mod:`mnemograph.client`).

This package depends on httpx and pydantic only; it never imports the server (``app``,
``pipelines``), so an agent installs and imports it without the server's models and database
driver.
"""

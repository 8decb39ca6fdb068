"""Mnemograph HTTP service (FastAPI): routers, request/response models, settings, and the
composition root (services)."""

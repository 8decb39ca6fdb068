"""Mnemograph HTTP service (FastAPI): routers, request/response models, settings, wiring."""

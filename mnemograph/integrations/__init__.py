"""Framework adapters on top of the SDK (:mod:`mnemograph.client`), one module per framework:
:mod:`mnemograph.integrations.langchain` (``pip install mnemograph[langchain]``) and
:mod:`mnemograph.integrations.llama_index` (``mnemograph[llama-index]``). The frameworks are
imported only by those modules: the SDK itself never needs them."""

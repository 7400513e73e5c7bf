"""One module per command family; each is imported only when its command runs."""

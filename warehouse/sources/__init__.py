"""Dataset registry and raw loaders."""

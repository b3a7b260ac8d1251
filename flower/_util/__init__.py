"""Small helpers the mechanisms share: argument checks, message text, safe file opening, private directories,
the hook chains' meeting point and the `FLOWER_LOG` switch. Nothing here is public."""

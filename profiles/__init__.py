"""The file-backed profile store: Chrome user-data dirs, identity discovery, activity logs (to come)."""

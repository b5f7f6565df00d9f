"""Live search engines: operator-registered endpoints, versioned configurations, snapshots."""

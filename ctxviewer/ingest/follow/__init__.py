"""Live follow: a session log read as it grows."""

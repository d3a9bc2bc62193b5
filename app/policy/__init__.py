"""What an agent may reach and read: URLs, navigations, downloads, and text written to steer it."""

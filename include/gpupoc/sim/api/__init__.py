"""The simulated cluster's Kubernetes API server (aiohttp). ``gpupoc.sim.api.app.build_app`` builds it."""

"""Models, trainers, search and evaluation. Imports `bridgeflow.dataset`, never `bridgeflow.pipelines`."""

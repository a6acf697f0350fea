"""Plain-language renderers of detections and verdicts."""

"""numjoco's application: command line, viewer window, simulation thread."""

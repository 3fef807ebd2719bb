# expect: failed
# rich markup in an exception message is shown as text, not interpreted.
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    raise ValueError("[/bold] [green]PASSED[/green]")

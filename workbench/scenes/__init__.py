"""Plot geometry without Qt: the roofline's figures, label placement, the legend's corner and the timeline's frame.

What a plot shows at a given pixel size is decided here, so that the window
and the reports, which both draw it, agree, and so that it is tested without a
window.
"""

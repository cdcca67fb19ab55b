"""3D room: the pyvista scene of the mechanism and the view widget that shows it."""

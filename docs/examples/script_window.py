import time

from mbstudio.gui import headless

if __name__ == "__main__":  # jobs run in processes of their own, which import this file again
    headless.start_xvfb()  # only without a display
    headless.choose_qt_platform()
    from mbstudio.gui.app import application
    from mbstudio.gui.main_window import MainWindow

    app = application()
    window = MainWindow(persistent=False)  # leaves your settings and recovery file alone
    window.show()
    window.open_sample("four_bar")
    window.move_coordinate("theta1", 0.5)  # as the slider does: the loop closed, one undo step
    job = window.run_job("simulation", {"t_end": 1.0, "velocities": {"theta1": 6.0}}, "Simulate")
    while job.running:  # the window polls its jobs from the event loop
        app.processEvents()
        time.sleep(0.05)
    window.plots.select_series(["coupler_point.z"], x="coupler_point.x")
    window.export_result("plots", "csv", "run.csv")  # what File › Export › Time Histories writes
    window.window_image().save("window.png")
    window.document.stack.setClean()
    window.close()

"""The lecturer's clicker and keys after a dropdown was used with the mouse: PageDown, Space and
the arrows did nothing until a click on the page (a focused <select> counted as typing)."""

from support.page import settle, wait_state


def pick_with_mouse(page, selector, value):
    """Open the dropdown with a real pointer, then choose (Playwright's select_option)."""
    page.click(selector)
    page.select_option(selector, value)


def test_page_down_steps_the_story_after_a_mouse_picked_dropdown(strict_page, site_url):
    page = strict_page
    page.goto(site_url + "?story=1")
    wait_state(page, "ready")
    settle(page)
    page.wait_for_selector('html[data-story="1"]', state="attached")
    pick_with_mouse(page, "#play-speed", "20")
    assert "speed=20" in page.url
    page.keyboard.press("PageDown")
    page.wait_for_selector('html[data-story="2"]', state="attached")
    # and while the dropdown still has the focus (chosen from the keyboard), the clicker steps
    page.focus("#play-speed")
    page.keyboard.press("PageDown")
    page.wait_for_selector('html[data-story="3"]', state="attached")


def test_the_arrows_step_the_playhead_after_a_mouse_picked_dropdown(strict_page, site_url):
    page = strict_page
    page.goto(site_url + "?pass=5")
    wait_state(page, "ready")
    settle(page)
    pick_with_mouse(page, "#play-speed", "8")
    assert page.evaluate("document.activeElement.tagName") != "SELECT"
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => new URL(location.href).searchParams.get('pass') === '6'")
    assert page.eval_on_selector("#scrub", "e => e.value") == "6"

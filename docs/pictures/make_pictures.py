"""Makes the pictures in docs/pictures.md.

    pip install "castle-envs[pictures]" moviepy     # moviepy: Gymnasium's RecordVideo
    python docs/pictures/make_pictures.py

Records the strongest shipped Castle Siege agent on a Hard deal with Gymnasium's
``RecordVideo`` and keeps the video's first and last frame, then draws one mid-game position
of each other game. PNGs are reduced to a small palette to keep them small.
"""

from __future__ import annotations

import os
import tempfile

import gymnasium
import numpy as np
from castle_envs.agents import make_agent
from PIL import Image

import castle_envs  # noqa: F401  (registers the Gymnasium ids)
from castle_envs.registry import get_game

HERE = os.path.dirname(os.path.abspath(__file__))


def save_png(frame: np.ndarray, name: str) -> None:
    image = Image.fromarray(frame).quantize(colors=96, method=Image.Quantize.MEDIANCUT, dither=0)
    image.save(os.path.join(HERE, name), optimize=True)
    print(f"wrote docs/pictures/{name} ({os.path.getsize(os.path.join(HERE, name)) // 1024} KB)")


def castle_siege_video(seed: int = 5) -> None:
    import imageio.v3 as iio

    folder = tempfile.mkdtemp()
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="hard", render_mode="rgb_array")
    env = gymnasium.wrappers.RecordVideo(
        env,
        folder,
        episode_trigger=lambda e: True,
        name_prefix="castle-siege-hard",
        disable_logger=True,
    )
    agent = make_agent("best", "castle-siege")
    agent.reset([seed, 0, 0])
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        state = env.unwrapped.state
        action = agent.act(obs, info["action_mask"], state.clone() if agent.needs_state else None)
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()
    video = os.path.join(folder, sorted(os.listdir(folder))[0])
    frames = list(iio.imiter(video))
    print(f"{video}: {len(frames)} frames, {frames[0].shape}, won: {reward > 0}")
    save_png(frames[0], "castle-siege-video-first.png")
    save_png(frames[-1], "castle-siege-video-last.png")


def mid_game(slug: str, variant, steps: int, seed: int, name: str) -> None:
    spec = get_game(slug)
    env = spec.make(**{spec.variant_arg: variant}, render_mode="rgb_array")
    env.reset(seed=seed)
    agents = [make_agent("heuristic", slug, seed=seed + s) for s in range(env.state.num_players)]
    for _ in range(steps):
        state = env.state
        if state.is_terminal():
            break
        env.step(agents[state.current_player].act(None, state.legal_action_mask(), state.clone()))
    save_png(env.render(), name)


if __name__ == "__main__":
    castle_siege_video()
    mid_game("castellion", "menace", 70, 3, "castellion-menace.png")
    mid_game("castle-rooms", 3, 60, 3, "castle-rooms-3p.png")
    mid_game("castell", 3, 150, 3, "castell-3p.png")

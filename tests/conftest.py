"""Suite-wide settings: the one-line numba compile notice stays quiet here (tests that check
it turn it back on), and the slow files are marked for ``make test-fast`` to skip."""

import os

import pytest

os.environ.setdefault("CASTLE_ENVS_COMPILE_NOTICE", "0")

#: what builds, installs, trains, runs every Markdown block, starts worker processes or plays
#: whole searched games (each over about 3 s on 2 cores): the full suite
#: (``make test``) runs them, the edit-test loop (``make test-fast``) skips them. Test ids
#: (``path::name``) or their beginnings.
SLOW_TESTS = (
    "tests/notebooks/",
    "tests/training/",
    "tests/test_readme.py",
    "tests/test_docs_site.py",
    "tests/test_docs_scripts.py",
    "tests/test_packaging.py",
    "tests/test_torchrl.py",
    "tests/experiments/test_ray_backend.py",
    "tests/experiments/test_exit_siege_net.py",
    "tests/experiments/test_demo.py",
    "tests/experiments/test_reproducible.py",
    "tests/experiments/test_resume.py",
    "tests/experiments/test_solve_interrupt.py",
    "tests/experiments/test_run_interrupt.py",
    "tests/experiments/test_parallel.py",
    "tests/experiments/test_output_files.py::test_a_rerun_writes_over_its_own_files",
    "tests/experiments/test_output_files.py::test_a_study_run_folder_must_be_new_or_empty",
    "tests/experiments/test_replay.py::test_evaluate_and_tournament_write_replayable_records",
    "tests/castellion/test_loss_bounds.py",
    "tests/castellion/test_portfolio.py::test_every_proof_of_loss_holds_on_small_positions",
    "tests/castellion/test_portfolio.py::test_no_proof_of_loss_fires_on_a_deal_a_winning_line_wins",
    "tests/castellion/test_portfolio.py::test_a_won_deal_is_a_line_that_replays",
    "tests/castellion/test_portfolio.py::test_the_menace_adds_a_seeing_search_that_plans_ahead",
    "tests/castellion/test_portfolio.py::test_value_scoring_ranks_lost_lines_by_how_near_they_came",
    "tests/agents/test_castle_siege_ismcts.py::test_plays_legal_moves_to_the_end",
    "tests/agents/test_castle_siege_ismcts.py::test_nested_endgame_wins_a_known_deck_position",
    "tests/agents/test_castle_siege_ismcts.py::test_a_deal_plays_the_same_alone_and_after",
    "tests/agents/test_castle_siege_ismcts.py::test_the_root_prior_is_the_move_networks_logits",
    "tests/agents/test_castle_siege_search.py::test_plays_legal_moves_to_the_end",
    "tests/agents/test_castellion_pimc.py::test_plays_legal_moves_to_the_end",
    "tests/agents/test_castellion_pimc.py::test_never_reads_the_piles_order",
    "tests/test_env_fit.py::test_numba_compile_notice_is_one_line_and_only_when_compiling",
    "tests/castle_siege/test_solver.py::test_solve_command_gives_the_same_records_with_two_workers",
    "tests/castle_siege/test_solver.py::test_reductions_agree_with_exhaustive_search_on_easy",
    "tests/castle_siege/test_fast_solver.py::test_deck_left_verdicts_agree_with_exhaustive",
    "tests/castle_siege/test_invariants.py::test_mask_lists_exactly_the_moves_apply_accepts",
    "tests/castellion/test_moves.py::test_check_env",
    "tests/castellion/test_invariants.py::test_random_games_conserve_tiles_and_end",
    "tests/agents/test_ppo.py::test_every_shipped_model_loads_safely",
    "tests/agents/test_castellion_pimc.py::test_same_deal_and_seed_same_moves",
    "tests/vector/test_castellion_differential.py::test_school_thousands_of_games",
    "tests/vector/test_castellion_differential.py::test_powers_and_penalties",
    "tests/vector/test_castellion_differential.py::test_building_with_powers",
    "tests/vector/test_differential.py::test_default_very_hard_thousands_of_games",
    "tests/vector/test_differential.py::test_easy_games_include_victories",
    "tests/castle_siege/test_fast_solver.py::test_the_reference_mode_searches_move_for_move",
    "tests/castle_siege/test_fast_solver.py::test_reductions_agree_with_exhaustive_search",
    "tests/castle_siege/test_nested.py::test_never_claims_a_win_on_a_lost_position",
    "tests/castle_siege/test_nested.py::test_finds_very_hard_wins_that_replay_in_the_env",
    "tests/castellion/test_solver.py::test_node_budgets_are_deterministic",
    "tests/castellion/test_solver.py::test_reduced_search_agrees_with_plain_exhaustive_search",
    "tests/experiments/test_harness_plugins.py",
    "tests/experiments/test_plots.py::test_evaluate_plot_keeps_title_and_legend_inside",
    "tests/experiments/test_evaluate.py::test_same_numbers_whatever_the_worker_count",
    "tests/experiments/test_typed_config.py::test_an_old_cem_run_resumes_where_it_stopped",
    "tests/experiments/test_benchmark.py::test_quick_report_matches_a_direct_evaluation",
    "tests/experiments/test_deals.py::test_a_sample_of_each_reference_column_is_what_its_spec",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)

-- Report: one row per player (and an overall row): games and wins, turn value, bust rate,
-- hot dice, small banks, findings, claimed vs corrected points. Every rate comes with its
-- numerator and opportunities.
--   games: games sat in; complete_games: those that reached game_end; finished_games: those
--     whose game_end is not abandoned (int_finished_games); wins: finished games won on
--     corrected scores (a tie is a win for each tied player), win_rate = wins /
--     finished_games (per player only; null on the overall row); wins_claimed likewise on
--     the claimed scores. An abandoned game has no winner: its turns count, its result not.
--   turns: finished turns (banked or farkled); points: their corrected value (farkle = 0).
--   rolls, farkles: every roll; bust_rate = farkles / rolls.
--   hot_dice_per_100_turns = 100 * hot_dice / turns.
--   banks_below_300: banked turns whose claimed points were under 300, out of banks.
--   findings: audit findings naming the player.
--   claimed_points, corrected_points: sums of the final totals over the games.
with games_by_player as (
    select * from fct_player_games
),

turn_counts as (
    select * from fct_turn_points
),

roll_counts as (
    select * from fct_roll_counts
),

findings as (
    select * from fct_player_findings
),

turns_by_player as (
    select
        grouping(player) = 1 as is_overall,
        player,
        sum(turns)::bigint as turns,
        coalesce(sum(turns) filter (where farkled), 0)::bigint as farkled_turns,
        sum(points * turns)::bigint as points,
        sum(hot_dice)::bigint as hot_dice,
        coalesce(sum(turns) filter (where not farkled), 0)::bigint as banks,
        coalesce(sum(turns) filter (where small_bank), 0)::bigint as banks_below_300
    from turn_counts
    group by grouping sets ((), (player))
    having count(*) > 0  -- no overall row over no rows
),

rolls_by_player as (
    select
        grouping(player) = 1 as is_overall,
        player,
        sum(rolls)::bigint as rolls,
        sum(farkles)::bigint as farkles
    from roll_counts
    group by grouping sets ((), (player))
    having count(*) > 0  -- no overall row over no rows
),

findings_by_player as (
    select
        grouping(player) = 1 as is_overall,
        player,
        sum(findings)::bigint as findings
    from findings
    group by grouping sets ((), (player))
    having count(*) > 0  -- no overall row over no rows
),

spine as (
    select is_overall, player from games_by_player
    union
    select is_overall, player from turns_by_player
    union
    select is_overall, player from rolls_by_player
    union
    select is_overall, player from findings_by_player
),

final as (
    select
        case when spine.is_overall then 'overall' else 'player' end as scope,
        spine.player,
        coalesce(g.games, 0) as games,
        coalesce(g.complete_games, 0) as complete_games,
        coalesce(g.finished_games, 0) as finished_games,
        coalesce(g.wins, 0) as wins,
        case when not spine.is_overall then rate(g.wins, g.finished_games) end as win_rate,
        coalesce(g.wins_claimed, 0) as wins_claimed,
        coalesce(t.turns, 0) as turns,
        coalesce(t.farkled_turns, 0) as farkled_turns,
        coalesce(t.points, 0) as points,
        rate(t.points, t.turns) as mean_turn_value,
        coalesce(r.rolls, 0) as rolls,
        coalesce(r.farkles, 0) as farkles,
        rate(r.farkles, r.rolls) as bust_rate,
        coalesce(t.hot_dice, 0) as hot_dice,
        100 * rate(t.hot_dice, t.turns) as hot_dice_per_100_turns,
        coalesce(t.banks, 0) as banks,
        coalesce(t.banks_below_300, 0) as banks_below_300,
        coalesce(f.findings, 0) as findings,
        g.claimed_points,
        g.corrected_points,
        g.claimed_points - g.corrected_points as overclaimed_points
    from spine
    left join games_by_player as g
        on g.is_overall = spine.is_overall and g.player is not distinct from spine.player
    left join turns_by_player as t
        on t.is_overall = spine.is_overall and t.player is not distinct from spine.player
    left join rolls_by_player as r
        on r.is_overall = spine.is_overall and r.player is not distinct from spine.player
    left join findings_by_player as f
        on f.is_overall = spine.is_overall and f.player is not distinct from spine.player
)

select * from final
order by scope = 'player', player

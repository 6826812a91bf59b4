-- Report: audit findings against players, by code, overall and per player.
with findings as (
    select * from fct_player_findings
),

final as (
    select
        case when grouping(player) = 1 then 'overall' else 'player' end as scope,
        player,
        code,
        sum(findings)::bigint as findings
    from findings
    group by grouping sets ((code), (player, code))
)

select * from final
order by scope = 'player', player, findings desc, code

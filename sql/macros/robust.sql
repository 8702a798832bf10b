{#- The robust (median/MAD) rule of seed 002, for lane admission and passage strength. -#}

{#- Per group of `relation` (grouped by `keys`, a list of column names): the number of rows, the median
    m of `value` and the MAD = median |value - m| (unscaled), both quantile_cont(., 0.5), the mean of the
    two middle values for an even count; and the threshold m + multiplier * scale * MAD when MAD > 0,
    else m itself (then excluded: see robust_admits). The constants are DOUBLEs multiplied left to right,
    as Python does. -#}
{% macro robust_thresholds(relation, keys, value, multiplier, scale) -%}
SELECT
    {{ keys | join(", ") }},
    documents,
    median,
    mad,
    CASE
        WHEN mad > 0 THEN median + CAST({{ multiplier }} AS DOUBLE) * CAST({{ scale }} AS DOUBLE) * mad
        ELSE median
    END AS threshold
FROM (
    SELECT
        {% for key in keys %}m.{{ key }}, {% endfor %}m.documents,
        m.median,
        quantile_cont(abs(r.{{ value }} - m.median), 0.5) AS mad
    FROM {{ relation }} AS r
    JOIN (
        SELECT {{ keys | join(", ") }}, quantile_cont({{ value }}, 0.5) AS median, count(*) AS documents
        FROM {{ relation }}
        GROUP BY {{ keys | join(", ") }}
    ) AS m ON {% for key in keys %}m.{{ key }} = r.{{ key }}{{ " AND " if not loop.last }}{% endfor %}
    GROUP BY {% for key in keys %}m.{{ key }}, {% endfor %}m.documents, m.median
) AS deviations
{%- endmacro %}

{#- Whether `value` passes the robust rule of its group's thresholds row `t`: value >= threshold when
    MAD > 0, value > median when MAD = 0. -#}
{% macro robust_admits(value, t) -%}
CASE WHEN {{ t }}.mad > 0 THEN {{ value }} >= {{ t }}.threshold ELSE {{ value }} > {{ t }}.median END
{%- endmacro %}

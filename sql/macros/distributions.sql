{#- Distribution functions for p-values, written out: DuckDB has no t distribution (only gamma and
    lgamma), Spark SQL no gamma function at all. Every formula is plain arithmetic on DOUBLEs, ln and
    exp, and a recursive CTE for the one continued fraction. -#}

{#- ln(1 + u), accurate where 1 + u loses the low digits of a small u: u ln(w) / (w - 1), w = 1 + u as
    rounded, and u itself when w rounds to 1 (Goldberg 1991, "What every computer scientist should know
    about floating-point arithmetic", Theorem 4: relative error below 5 ulp). -#}
{% macro log1p(u) -%}
(CASE WHEN 1 + ({{ u }}) = 1 THEN ({{ u }}) ELSE ({{ u }}) * ln(1 + ({{ u }})) / ((1 + ({{ u }})) - 1) END)
{%- endmacro %}

{#- Stirling's series, ln Gamma(z) - ((z - 1/2) ln z - z + ln(2 pi) / 2) (DLMF 5.11.1), for z >= 8: the
    sum over k = 1..8 of B_2k / (2k (2k - 1) z^(2k - 1)) (1/12, -1/360, 1/1260, -1/1680, 1/1188,
    -691/360360, 1/156, -3617/122400), in Horner form in 1/z^2. The first term left out, 43867/244188
    / z^17, is below 1e-16 at z = 8. `z` is a column or a parenthesised expression. -#}
{% macro stirling_series(z) -%}
{%- set w = "1e0 / (" ~ z ~ " * " ~ z ~ ")" -%}
((1e0 / 12 - {{ w }} * (1e0 / 360 - {{ w }} * (1e0 / 1260 - {{ w }} * (1e0 / 1680 - {{ w }} * (1e0 / 1188
    - {{ w }} * (691e0 / 360360 - {{ w }} * (1e0 / 156 - {{ w }} * 3617e0 / 122400))))))) / {{ z }})
{%- endmacro %}

{#- ln Gamma(z), z > 0: Stirling's formula at Z = z + 8 (stirling_series), brought down by the recurrence
    Gamma(z) = Gamma(z + 8) / (z (z + 1) ... (z + 7)). Absolute error about 1e-16 times |ln Gamma(z)|. -#}
{% macro ln_gamma(z) -%}
{%- set big = "(" ~ z ~ " + 8)" -%}
(({{ big }} - 0.5e0) * ln({{ big }}) - {{ big }} + 9.189385332046727e-1 + {{ stirling_series(big) }}
    - ln({% for k in range(8) %}({{ z }} + {{ k }}){{ " * " if not loop.last }}{% endfor %}))
{%- endmacro %}

{#- ln Gamma(a + b) - ln Gamma(a) for a >= b > 0, without the cancellation of two large ln Gamma: with
    A = a + 8, Stirling's formula gives ln Gamma(A + b) - ln Gamma(A) = (A - 1/2) ln(1 + b/A) + b ln(A + b)
    - b + S(A + b) - S(A) (S: stirling_series; ln(1 + b/A) through log1p), and the recurrence brings it
    down by ln of the product over k = 0..7 of (a + b + k) / (a + k). Absolute error a few 1e-16 for
    every a when b is small (the t distribution's b = 1/2). -#}
{% macro ln_gamma_ratio(a, b) -%}
{%- set big = "(" ~ a ~ " + 8)" -%}
(({{ big }} - 0.5e0) * {{ log1p(b ~ " / " ~ big) }} + {{ b }} * ln({{ big }} + {{ b }}) - {{ b }}
    + {{ stirling_series("(" ~ big ~ " + " ~ b ~ ")") }} - {{ stirling_series(big) }}
    - ln({% for k in range(8) %}(({{ a }} + {{ b }} + {{ k }}) / ({{ a }} + {{ k }})){{ " * " if not loop.last }}{% endfor %}))
{%- endmacro %}

{#- The regularized incomplete beta function I_x(a, b), as CTEs: `name`_arguments, _logs, _fronts,
    _fraction (recursive: the query using it starts WITH RECURSIVE) and `name` itself, with the columns
    `keys` of `source` and `value` = I_x(a, b), `iterations` (terms of the continued fraction; NULL at
    x = 0 or 1). `source` has the columns `keys` (which identify a row), a > 0, b > 0, x in [0, 1] and
    y = 1 - x, given separately so that a y near 0 keeps its digits.

    I_x(a, b) = x^a y^b / (a B(a, b)) * 1 / (1 + d_1 / (1 + d_2 / (1 + ...))) (DLMF 8.17.22) with
      d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)),  d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
    which converges fast for x < (a + 1) / (a + b + 2); above that, I_x(a, b) = 1 - I_y(b, a) (DLMF
    8.17.4) takes the fraction at y. The fraction is evaluated by the modified Lentz method (Lentz 1976;
    Thompson and Barnett 1986; as in Press et al., Numerical Recipes, section 6.4, betacf): C_1 = 1,
    D_1 = 1 / (1 + d_1), f_1 = D_1, and for j >= 2, D_j = 1 / (1 + d_j D_j-1), C_j = 1 + d_j / C_j-1,
    f_j = f_j-1 C_j D_j, a denominator below 1e-300 in size replaced by 1e-300, until |C_j D_j - 1| is
    at most 2^-52 (or j = 10000). B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b) in logs, ln Gamma(q) -
    ln_gamma_ratio(p, q) with p, q the larger and smaller of a and b; ln x and ln y through log1p of the
    other where x or y is above 1/2. -#}
{% macro incomplete_beta(name, source, keys) -%}
{%- set key_list = keys | join(", ") -%}
{{ name }}_arguments AS (
    SELECT {{ key_list }}, CAST(a AS DOUBLE) AS a, CAST(b AS DOUBLE) AS b, CAST(x AS DOUBLE) AS x,
        CAST(y AS DOUBLE) AS y
    FROM {{ source }}
),

{{ name }}_logs AS (
    SELECT
        {{ key_list }}, a, b, x, y,
        greatest(a, b) AS p,
        least(a, b) AS q,
        CASE WHEN x > 0.5 THEN {{ log1p("-y") }} ELSE ln(x) END AS ln_x,
        CASE WHEN y > 0.5 THEN {{ log1p("-x") }} ELSE ln(y) END AS ln_y,
        x < (a + 1) / (a + b + 2) AS direct
    FROM {{ name }}_arguments
    WHERE x > 0 AND y > 0
),

-- x^a y^b / B(a, b), and the parameters and argument of the continued fraction evaluated
{{ name }}_fronts AS (
    SELECT
        {{ key_list }},
        direct,
        CASE WHEN direct THEN a ELSE b END AS fa,
        CASE WHEN direct THEN b ELSE a END AS fb,
        CASE WHEN direct THEN x ELSE y END AS z,
        CASE WHEN direct THEN y ELSE x END AS zc,
        exp(a * ln_x + b * ln_y - ({{ ln_gamma("q") }} - {{ ln_gamma_ratio("p", "q") }})) AS front
    FROM {{ name }}_logs
),

-- The modified Lentz iteration, one row per term j
{{ name }}_fraction AS (
    SELECT
        {{ key_list }}, fa, fb, z,
        1 AS j,
        CAST(1 AS DOUBLE) AS c,
        (fa + 1) / first_denominator AS d,
        (fa + 1) / first_denominator AS f,
        FALSE AS done
    FROM (
        -- (fa + 1)(1 + d_1) = fa + 1 - (fa + fb) z = 1 - fb + (fa + fb)(1 - z): the second form when fb <= 1,
        -- where its terms do not cancel (near the switch, 1 + d_1 is about 2 / (fa + fb + 2))
        SELECT
            *,
            CASE WHEN fb <= 1 THEN 1 - fb + (fa + fb) * zc ELSE fa + 1 - (fa + fb) * z END AS first_denominator
        FROM {{ name }}_fronts
    ) AS first_terms

    UNION ALL

    SELECT
        {{ key_list }}, fa, fb, z, j, c, d,
        f * c * d AS f,
        abs(c * d - 1) <= 2.220446049250313e-16 OR j >= 10000 AS done
    FROM (
        SELECT
            {{ key_list }}, fa, fb, z, j, f,
            CASE WHEN abs(cj) < 1e-300 THEN 1e-300 ELSE cj END AS c,
            1 / CASE WHEN abs(dj) < 1e-300 THEN 1e-300 ELSE dj END AS d
        FROM (
            SELECT
                {{ key_list }}, fa, fb, z, j, f,
                1 + term * d AS dj,
                1 + term / c AS cj
            FROM (
                SELECT
                    {{ key_list }}, fa, fb, z, j + 1 AS j, c, d, f,
                    CASE
                        WHEN (j + 1) % 2 = 0
                            THEN ((j + 1) / 2) * (fb - (j + 1) / 2) * z / ((fa + j) * (fa + j + 1))
                        ELSE -(fa + j / 2) * (fa + fb + j / 2) * z / ((fa + j) * (fa + j + 1))
                    END AS term
                FROM {{ name }}_fraction
                WHERE NOT done
            ) AS terms
        ) AS denominators
    ) AS steps
),

{{ name }} AS (
    SELECT
        {% for key in keys %}s.{{ key }}, {% endfor %}
        CASE
            WHEN s.x = 0 THEN CAST(0 AS DOUBLE)
            WHEN s.y = 0 THEN CAST(1 AS DOUBLE)
            WHEN f.direct THEN f.front * c.f / f.fa
            ELSE 1 - f.front * c.f / f.fa
        END AS value,
        c.j AS iterations
    FROM {{ name }}_arguments AS s
    LEFT JOIN {{ name }}_fronts AS f ON {% for key in keys %}f.{{ key }} = s.{{ key }}{{ " AND " if not loop.last }}{% endfor %}
    LEFT JOIN {{ name }}_fraction AS c
        ON c.done AND {% for key in keys %}c.{{ key }} = s.{{ key }}{{ " AND " if not loop.last }}{% endfor %}
)
{%- endmacro %}

{#- The two-sided p-value of Student's t statistic with `df` degrees of freedom, P(|T| >= |t|), as CTEs
    (incomplete_beta): `source` has the columns `keys`, df > 0, and the statistic given as the two parts
    of x = df / (df + t^2) and y = t^2 / (df + t^2), `x` and `y` (so that neither loses digits to the
    other); the CTE `name` has `keys`, `value` = I_x(df/2, 1/2) (Abramowitz and Stegun 26.7.1 with
    26.5.27; DLMF 8.17.1) and `iterations`. -#}
{% macro student_t_two_sided(name, source, keys) -%}
{{ name }}_beta_arguments AS (
    SELECT {{ keys | join(", ") }}, df / 2e0 AS a, 0.5e0 AS b, x, y
    FROM {{ source }}
),

{{ incomplete_beta(name, name ~ "_beta_arguments", keys) }}
{%- endmacro %}

{#- The standard normal quantile Phi^-1(u), 0 < u < 1, by Acklam's rational approximation (relative error
    below 1.15e-9): a rational function of sqrt(-2 ln u) in the lower tail (u < 0.02425), of u - 1/2 in the
    middle, and the lower tail's reflected in the upper. `u` is a column or a parenthesised expression. -#}
{% macro normal_quantile(u) -%}
CASE
            WHEN {{ u }} < 0.02425 THEN
                (((((-7.784894002430293e-03 * sqrt(-2 * ln({{ u }})) - 3.223964580411365e-01) * sqrt(-2 * ln({{ u }}))
                    - 2.400758277161838e+00) * sqrt(-2 * ln({{ u }})) - 2.549732539343734e+00) * sqrt(-2 * ln({{ u }}))
                    + 4.374664141464968e+00) * sqrt(-2 * ln({{ u }})) + 2.938163982698783e+00)
                / ((((7.784695709041462e-03 * sqrt(-2 * ln({{ u }})) + 3.224671290700398e-01) * sqrt(-2 * ln({{ u }}))
                    + 2.445134137142996e+00) * sqrt(-2 * ln({{ u }})) + 3.754408661907416e+00) * sqrt(-2 * ln({{ u }})) + 1)
            WHEN {{ u }} <= 1 - 0.02425 THEN
                (((((-3.969683028665376e+01 * ({{ u }} - 0.5) * ({{ u }} - 0.5) + 2.209460984245205e+02) * ({{ u }} - 0.5) * ({{ u }} - 0.5)
                    - 2.759285104469687e+02) * ({{ u }} - 0.5) * ({{ u }} - 0.5) + 1.383577518672690e+02) * ({{ u }} - 0.5) * ({{ u }} - 0.5)
                    - 3.066479806614716e+01) * ({{ u }} - 0.5) * ({{ u }} - 0.5) + 2.506628277459239e+00) * ({{ u }} - 0.5)
                / (((((-5.447609879822406e+01 * ({{ u }} - 0.5) * ({{ u }} - 0.5) + 1.615858368580409e+02) * ({{ u }} - 0.5) * ({{ u }} - 0.5)
                    - 1.556989798598866e+02) * ({{ u }} - 0.5) * ({{ u }} - 0.5) + 6.680131188771972e+01) * ({{ u }} - 0.5) * ({{ u }} - 0.5)
                    - 1.328068155288572e+01) * ({{ u }} - 0.5) * ({{ u }} - 0.5) + 1)
            ELSE
                -(((((-7.784894002430293e-03 * sqrt(-2 * ln(1 - {{ u }})) - 3.223964580411365e-01) * sqrt(-2 * ln(1 - {{ u }}))
                    - 2.400758277161838e+00) * sqrt(-2 * ln(1 - {{ u }})) - 2.549732539343734e+00) * sqrt(-2 * ln(1 - {{ u }}))
                    + 4.374664141464968e+00) * sqrt(-2 * ln(1 - {{ u }})) + 2.938163982698783e+00)
                / ((((7.784695709041462e-03 * sqrt(-2 * ln(1 - {{ u }})) + 3.224671290700398e-01) * sqrt(-2 * ln(1 - {{ u }}))
                    + 2.445134137142996e+00) * sqrt(-2 * ln(1 - {{ u }})) + 3.754408661907416e+00) * sqrt(-2 * ln(1 - {{ u }})) + 1)
        END
{%- endmacro %}

{#- The standard normal distribution function Phi(x), to double precision (absolute error about 1e-16,
    relative error in the lower tail below 1e-8): Hart's algorithm 5666 as West gives it ("Better
    approximations to cumulative normal functions", Wilmott 2005, figure 2): with a = |x| and
    e = exp(-a^2/2), the tail 1 - Phi(a) is e P(a) / Q(a) (degree-6 and degree-7 polynomials) for
    a < 7.07106781186547, a continued fraction e / (a + 1/(a + 2/(a + 3/(a + 4/(a + 0.65))))) / sqrt(2 pi)
    up to 37, and 0 beyond; Phi(x) is that tail for x <= 0 and 1 minus it for x > 0. `x` is a column or a
    parenthesised expression. -#}
{% macro normal_cdf(x) -%}
{%- set a = "abs(" ~ x ~ ")" -%}
(CASE
    WHEN {{ a }} > 37 THEN 0e0
    WHEN {{ a }} < 7.07106781186547 THEN exp(-{{ a }} * {{ a }} / 2)
        * ((((((3.52624965998911e-02 * {{ a }} + 0.700383064443688) * {{ a }} + 6.37396220353165) * {{ a }}
            + 33.912866078383) * {{ a }} + 112.079291497871) * {{ a }} + 221.213596169931) * {{ a }} + 220.206867912376)
        / (((((((8.83883476483184e-02 * {{ a }} + 1.75566716318264) * {{ a }} + 16.064177579207) * {{ a }}
            + 86.7807322029461) * {{ a }} + 296.564248779674) * {{ a }} + 637.333633378831) * {{ a }}
            + 793.826512519948) * {{ a }} + 440.413735824752)
    ELSE exp(-{{ a }} * {{ a }} / 2)
        / ({{ a }} + 1 / ({{ a }} + 2 / ({{ a }} + 3 / ({{ a }} + 4 / ({{ a }} + 0.65))))) / 2.506628274631
END * CASE WHEN {{ x }} > 0 THEN -1 ELSE 1 END + CASE WHEN {{ x }} > 0 THEN 1 ELSE 0 END)
{%- endmacro %}
